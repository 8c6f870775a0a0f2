/** The agent as its own process, for tests that kill it with SIGKILL: `tsx agent-child.ts <config>`. */
import { runStart } from '../../../src/cli/start-runner.js';

process.exitCode = await runStart(process.argv[2] ?? './config/agent.yaml');
