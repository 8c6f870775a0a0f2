/**
 * The harness client with the follower's calls counted (and, for fault injection, a hook after
 * each download URL is handed out). Every call still goes to the real sandbox.
 */
import type { AgentClient } from '../../../src/agent/agent.js';
import type { DocexClient } from '../../../src/api/index.js';
import type { Clock } from '../../../src/core/clock.js';

export interface CallLog {
  /** `route` and clock time of each call the follower started. */
  calls: { route: string; at: number; key?: string }[];
  count(route: string, key?: string): number;
}

export function countingClient(
  base: DocexClient,
  clock: Clock,
  hooks: { afterDownloadUrl?: (sendingEventId: string, fileReference: string) => Promise<void> } = {},
): { client: AgentClient; log: CallLog } {
  const calls: CallLog['calls'] = [];
  const note = (route: string, key?: string) =>
    calls.push({ route, at: clock.now(), ...(key ? { key } : {}) });
  const se = base.sendingEvents;
  const jobs = base.jobs;
  const client: AgentClient = {
    workflows: base.workflows,
    jobs: {
      createSingleFile: jobs.createSingleFile.bind(jobs),
      createPayloadPdf: jobs.createPayloadPdf.bind(jobs),
      createPayloadWord: jobs.createPayloadWord.bind(jobs),
      uploadFile: jobs.uploadFile.bind(jobs),
      iterate: jobs.iterate.bind(jobs),
      get: (id, options) => {
        note('GET /jobs/{id}', id);
        return jobs.get(id, options);
      },
    },
    sendingEvents: {
      get: (id, options) => {
        note('GET /sending-events/{id}', id);
        return se.get(id, options);
      },
      list: (query, options) => {
        note('GET /sending-events', query?.jobId);
        return se.list(query, options);
      },
      downloadUrl: async (id, ref, options) => {
        note('download-url', `${id}/${ref}`);
        const answer = await se.downloadUrl(id, ref, options);
        await hooks.afterDownloadUrl?.(id, ref);
        return answer;
      },
      downloadFile: async (url, target, options) => {
        // The pre-signed path names the blob, which is the document's file reference.
        const ref = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
        note('download started', ref);
        const result = await se.downloadFile(url, target, options);
        // Counted once complete: a download cut short by a stop is not a download.
        note('download', ref);
        return result;
      },
    },
  };
  return {
    client,
    log: {
      calls,
      count: (route, key) =>
        calls.filter((c) => c.route === route && (key === undefined || c.key === key)).length,
    },
  };
}
