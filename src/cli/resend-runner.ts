/**
 * Re-sends a sending event, refusing first, with a clear reason, what the specification forbids:
 * an event that is not in a final state (decisions: business SUCCESS, FAILURE or REJECTED with a
 * settled technical status) and an event that is itself a re-send. The service's 409 for the same
 * reasons (a race, or a rule we do not know) is reported the same way.
 */
import { isApiError } from '../api/index.js';
import { journalLocationOf } from '../config/index.js';
import { DocexError, isDocexError } from '../core/errors.js';
import { isFinalSendingEvent, type SendingEvent } from '../domain/wire.js';
import { followJobAgain } from '../returns/follow-again.js';
import type { OutputFormat } from './output/render.js';
import type { ServiceCliDeps } from './service-cli-deps.js';
import { type ServiceRun, withServiceClient } from './webhooks-runner.js';

/** Why this event may not be re-sent, or undefined when it may. Pure. */
export function resendRefusal(
  event: Pick<SendingEvent, 'id' | 'status' | 'businessStatus' | 'resendOf'>,
): DocexError | undefined {
  if (event.resendOf) {
    return new DocexError(
      'DOCEX_RESEND_OF_RESEND',
      `sending event ${event.id} is itself a re-send of ${event.resendOf}; re-send ${event.resendOf} instead`,
      { details: { sendingEventId: event.id, resendOf: event.resendOf } },
    );
  }
  if (!isFinalSendingEvent(event)) {
    return new DocexError(
      'DOCEX_RESEND_NOT_FINAL',
      `sending event ${event.id} is not in a final state (business ${event.businessStatus}, technical ${event.status}); wait until it ends`,
      { details: { sendingEventId: event.id, businessStatus: event.businessStatus, status: event.status } },
    );
  }
  return undefined;
}

/**
 * The re-sent event must be followed even without webhooks: its job is marked due in
 * the returns store. The re-send is done whatever happens here, so a failure is a warning only (an
 * error would invite a second re-send).
 */
async function markForPoll(run: ServiceRun, jobId: string): Promise<void> {
  try {
    await followJobAgain(journalLocationOf(run.config), run.config.stateDir, jobId, Date.now());
  } catch (err) {
    const why = `${isDocexError(err) ? `${err.code}: ` : ''}${err instanceof Error ? err.message : String(err)}`;
    run.io.stderr.write(
      `warning: re-sent, but job ${jobId} could not be marked for a poll (${why}); only a webhook for it makes the agent follow the new event\n`,
    );
  }
}

/** The re-sends of `source` the service lists (its job's events that name it as their source). */
async function resendsOf(run: ServiceRun, source: SendingEvent): Promise<SendingEvent[]> {
  const found: SendingEvent[] = [];
  for await (const event of run.client.sendingEvents.iterate({ jobId: source.jobId })) {
    if (event.resendOf === source.id) found.push(event);
  }
  return found;
}

/**
 * A re-send runs every task again (a second letter, a second registered mail): it is made once.
 * An event already re-sent is re-sent again only with `again`; after a lost answer the service's
 * list says whether the re-send was made, and it is never repeated blindly.
 */
export async function resendCommand(
  id: string,
  opts: { config: string; output?: OutputFormat; again?: boolean },
  deps: ServiceCliDeps = {},
): Promise<void> {
  await withServiceClient(deps, opts, async (run) => {
    const source = await run.client.sendingEvents.get(id);
    const refusal = resendRefusal(source);
    if (refusal) throw refusal;
    const earlier = await resendsOf(run, source);
    if (earlier.length > 0 && !opts.again) {
      throw new DocexError(
        'DOCEX_RESEND_DONE',
        `sending event ${id} was already re-sent as ${earlier.map((e) => e.id).join(', ')}; pass --again to re-send it once more`,
        { details: { sendingEventId: id, resends: earlier.map((e) => e.id) } },
      );
    }
    let created: SendingEvent;
    try {
      created = await run.client.sendingEvents.resend(id);
    } catch (err) {
      if (isApiError(err) && err.status === 409) {
        throw new DocexError('DOCEX_RESEND_REFUSED', `the service refused to re-send ${id}: ${err.message}`, {
          cause: err,
        });
      }
      if (isApiError(err) && err.status !== undefined) throw err;
      // No answer: the service may have made it. Its list tells; nothing is sent again here.
      const known = new Set(earlier.map((e) => e.id));
      const made = (await resendsOf(run, source)).find((e) => !known.has(e.id));
      if (!made) {
        throw new DocexError(
          'DOCEX_RESEND_UNANSWERED',
          `the re-send of ${id} got no answer and the service lists no new re-send of it: it was not made; run the command again`,
          { cause: err },
        );
      }
      created = made;
    }
    await markForPoll(run, created.jobId);
    await run.print({
      id: created.id,
      resendOf: created.resendOf ?? id,
      jobId: created.jobId,
      businessStatus: created.businessStatus,
      status: created.status,
    });
  });
}
