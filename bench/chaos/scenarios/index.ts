/** Every chaos scenario, in the order a run takes them. */
import type { Scenario } from '../scenario.js';
import { clockJumpScenario } from './clock-jump.js';
import { diskFullScenario } from './disk-full.js';
import {
  haFreezeScenario,
  haKillScenario,
  haPgCutScenario,
  haPgRestartScenario,
  haSftpFreezeScenario,
  haSftpKillScenario,
  haWebhookScenario,
} from './ha.js';
import { killScenario } from './kill.js';
import { lostAnswersScenario } from './lost-answers.js';
import { mixedScenario } from './mixed.js';
import { pgCutScenario } from './pg-cut.js';
import { pgRestartScenario } from './pg-restart.js';
import { serviceFaultsScenario } from './service-faults.js';
import { sftpDropsScenario } from './sftp-drops.js';
import { slowLinkScenario } from './slow-link.js';
import { tokenDownScenario } from './token-down.js';

export const SCENARIOS: readonly Scenario[] = [
  killScenario,
  lostAnswersScenario,
  serviceFaultsScenario,
  tokenDownScenario,
  slowLinkScenario,
  diskFullScenario,
  clockJumpScenario,
  sftpDropsScenario,
  // PostgreSQL journal only, whatever --journal says.
  pgRestartScenario,
  pgCutScenario,
  // Several agents on one PostgreSQL journal.
  haKillScenario,
  haFreezeScenario,
  haSftpKillScenario,
  haSftpFreezeScenario,
  haPgRestartScenario,
  haPgCutScenario,
  haWebhookScenario,
];

/** Not in a default run: the small all-in-one the test suite runs (`--only mixed` runs it here). */
export const EXTRA_SCENARIOS: readonly Scenario[] = [mixedScenario];
