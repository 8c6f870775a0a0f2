import { INPUT_SOURCE_TYPES, pageSchema, TASK_KINDS, type Workflow, workflowSchema } from '../domain/wire.js';
import type { ApiCaller, CallOptions } from './api-caller.js';
import { iterateAfter, type Page } from './pagination.js';
import type { UnknownValueReporter } from './unknown-values.js';

const workflowPage = pageSchema(workflowSchema);

export class WorkflowsApi {
  constructor(
    private readonly caller: ApiCaller,
    private readonly unknown: UnknownValueReporter,
  ) {}

  async get(id: string, options?: CallOptions): Promise<Workflow> {
    const workflow = await this.caller.call(
      { method: 'GET', route: '/workflows/{id}', params: { id }, options },
      workflowSchema,
    );
    return this.checked(workflow);
  }

  async list(
    query: { after?: string | undefined; maxItems?: number } = {},
    options?: CallOptions,
  ): Promise<Page<Workflow>> {
    const page = await this.caller.call(
      {
        method: 'GET',
        route: '/workflows',
        query: { after: query.after, maxItems: query.maxItems },
        options,
      },
      workflowPage,
    );
    return { items: page.items.map((w) => this.checked(w)), totalItems: page.totalItems };
  }

  iterate(query: { pageSize?: number; after?: string } = {}, options?: CallOptions) {
    return iterateAfter<Workflow>((after, maxItems) => this.list({ after, maxItems }, options), {
      route: '/workflows',
      ...query,
    });
  }

  private checked(workflow: Workflow): Workflow {
    this.unknown.check('workflow.inputSource.type', workflow.inputSource.type, INPUT_SOURCE_TYPES);
    for (const task of workflow.tasks) this.unknown.check('workflow.tasks.type', task.type, TASK_KINDS);
    return workflow;
  }
}
