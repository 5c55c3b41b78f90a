import { Spectators } from '../presenters/spectator.ts';
import { defineRoute } from '../route.ts';
import { presentProject } from '../presenters/project.presenter.ts';
import { presentDispatch } from '../presenters/run.presenter.ts';
import type { RunLinks } from '../presenters/links.ts';
import type { ProjectsService } from '../services/projects.service.ts';
import type { RunsService } from '../services/runs.service.ts';
import { dispatchRunResponse } from './runs.schema.ts';
import {
  initProjectBody,
  initResponse,
  migrateResponse,
  plansResponse,
  projectIdParams,
  projectResponse,
  projectViewResponse,
  projectsResponse,
  readyPlansResponse,
  refreshProjectBody,
  refreshResponse,
  registerProjectBody,
  seedParams,
  seedSchema,
  svcConfigResponse,
  triggerParams,
  triggersResponse,
} from './projects.schema.ts';

export function projectsRoutes(projects: ProjectsService, runs: RunsService, links: RunLinks, spectators: Spectators) {
  const tags = ['projects'];
  return [
    defineRoute({
      method: 'get',
      path: '/projects',
      auth: 'readPublic',
      summary: 'List registered projects',
      tags,
      responses: { 200: { description: 'Every project', schema: projectsResponse } },
      handler: async ({ identity }) => {
        const rows = (await projects.list()).map(presentProject);
        if (!Spectators.is(identity)) return { status: 200, body: { projects: rows } };
        const visible = await spectators.visibleProjects();
        return { status: 200, body: { projects: rows.filter((row) => visible.has(row.id)).map(Spectators.project) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/projects',
      auth: 'admin',
      summary: 'Register a GitHub repository and clone it',
      tags,
      body: registerProjectBody,
      bodyRequired: true,
      responses: { 201: { description: 'The registered project', schema: projectResponse } },
      handler: async ({ body }) => ({
        status: 201,
        body: { project: presentProject((await projects.register(body.gitUrl, body.defaultBranch ?? null)).project) },
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/projects/{id}',
      auth: 'readPublic',
      summary: 'One project',
      tags,
      params: projectIdParams,
      responses: { 200: { description: 'The project', schema: projectViewResponse } },
      handler: async ({ params, identity }) => {
        const project = presentProject(await projects.get(params.id));
        await spectators.assertVisible(identity, project.id, `project "${params.id}"`);
        return { status: 200, body: { project: Spectators.is(identity) ? Spectators.project(project) : project } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/projects/{id}',
      auth: 'admin',
      summary: 'Delete a project: its row, its trigger schedules, then its clone',
      tags,
      params: projectIdParams,
      responses: { 200: { description: 'The deleted project', schema: projectResponse } },
      handler: async ({ params }) => ({
        status: 200,
        body: { project: presentProject(await projects.remove(params.id)) },
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/projects/{id}/refresh',
      auth: 'admin',
      summary: 'Fetch and hard-reset the clone to the remote ref',
      tags,
      params: projectIdParams,
      body: refreshProjectBody,
      responses: { 200: { description: 'The refreshed project and its head', schema: refreshResponse } },
      handler: async ({ params, body }) => {
        const refreshed = await projects.refresh(params.id, body.ref ?? null);
        return {
          status: 200,
          body: { project: presentProject(refreshed.project), headSha: refreshed.headSha, ref: refreshed.ref },
        };
      },
    }),
    // Registered before /seeds/{seedId}: the fixed path wins, so "plans" is never a seed id.
    defineRoute({
      method: 'get',
      path: '/projects/{id}/seeds/plans',
      auth: 'readOperator',
      summary: "The project's plans (.seeds/plans.jsonl)",
      tags,
      params: projectIdParams,
      responses: { 200: { description: 'Plan summaries', schema: plansResponse } },
      handler: async ({ params }) => ({ status: 200, body: { plans: await projects.plans(params.id) } }),
    }),
    defineRoute({
      method: 'get',
      path: '/projects/{id}/seeds/{seedId}',
      auth: 'readOperator',
      summary: 'One seed (issue)',
      tags,
      params: seedParams,
      responses: { 200: { description: 'The seed', schema: seedSchema } },
      handler: async ({ params }) => ({ status: 200, body: await projects.seed(params.id, params.seedId) }),
    }),
    defineRoute({
      method: 'get',
      path: '/projects/{id}/ready-plans',
      auth: 'readOperator',
      summary: 'Approved plans with open children, never dispatched',
      tags,
      params: projectIdParams,
      responses: { 200: { description: 'Ready plans', schema: readyPlansResponse } },
      handler: async ({ params }) => ({ status: 200, body: { plans: await projects.readyPlans(params.id) } }),
    }),
    defineRoute({
      method: 'get',
      path: '/projects/{id}/svc-config',
      auth: 'readOperator',
      summary: "The project's .svc/ configuration and its problems",
      tags,
      params: projectIdParams,
      responses: { 200: { description: 'Configuration', schema: svcConfigResponse } },
      handler: async ({ params }) => ({ status: 200, body: await projects.svcConfig(params.id) }),
    }),
    defineRoute({
      method: 'get',
      path: '/projects/{id}/triggers',
      auth: 'readOperator',
      summary: 'Cron triggers with their last and next fire',
      tags,
      params: projectIdParams,
      responses: { 200: { description: 'Triggers', schema: triggersResponse } },
      handler: async ({ params }) => ({ status: 200, body: await projects.triggers(params.id) }),
    }),
    defineRoute({
      method: 'post',
      path: '/projects/{id}/triggers/{triggerId}/run',
      auth: 'dispatch',
      summary: 'Dispatch a run as the trigger describes, now',
      tags,
      params: triggerParams,
      responses: { 201: { description: 'The run and its sandbox', schema: dispatchRunResponse } },
      handler: async ({ params }) => {
        const { run, sandbox } = await runs.dispatchTrigger(params.id, params.triggerId);
        return { status: 201, body: presentDispatch(run, sandbox, links('run', run.id)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/projects/{id}/init',
      auth: 'admin',
      summary: 'Scaffold .svc/triggers.yaml and .svc/config.yaml in the clone',
      tags,
      params: projectIdParams,
      body: initProjectBody,
      responses: { 201: { description: 'The files written', schema: initResponse } },
      handler: async ({ params, body }) => ({
        status: 201,
        body: await projects.init(params.id, body.defaultRole ?? null),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/projects/{id}/config-migrate',
      auth: 'admin',
      summary: 'Convert a legacy .svc/defaults.json into config.yaml and preview.yaml',
      tags,
      params: projectIdParams,
      responses: { 200: { description: 'The files written', schema: migrateResponse } },
      handler: async ({ params }) => ({ status: 200, body: await projects.migrateConfig(params.id) }),
    }),
  ];
}
