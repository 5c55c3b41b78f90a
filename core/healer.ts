// Alert healing, the pure part: what a Sentry or Grafana webhook says (its fingerprint, title,
// culprit and source project), which registered project a `.svc/config.yaml` `healer` mapping
// sends it to, and the prompt the healer run gets. The API and the healer workflow share it.
import { createHash } from 'node:crypto';

export const ALERT_SOURCES = ['sentry', 'grafana'] as const;
export type AlertSource = (typeof ALERT_SOURCES)[number];

export const HEAL_SKIP_REASONS = ['disabled', 'no_match', 'cooldown', 'max_retries'] as const;
export type HealSkipReason = (typeof HEAL_SKIP_REASONS)[number];

/** What svc keeps of an alert: enough to match it to a project and to brief the healer agent. */
export interface Alert {
  source: AlertSource;
  /** Stable per underlying problem: the same issue or alert rule alerting again shares it. */
  fingerprint: string;
  title: string;
  culprit: string | null;
  /** Sentry's project slug; Grafana's `project` or `service` label. */
  sourceProject: string | null;
  level: string | null;
  url: string | null;
  /** Grafana labels (or Sentry tags) as key → value. */
  labels: Record<string, string>;
  details: string | null;
}

/** One `healer.projectMapping` entry: every condition given must hold (strings compare case-insensitively). */
export interface HealerMappingRule {
  source?: AlertSource;
  /** Equals Sentry's project slug or Grafana's `project`/`service` label. */
  sourceProject?: string;
  /** A prefix of the culprit (Sentry's "module in function"). */
  culprit?: string;
  /** A substring of the title. */
  title?: string;
  /** Grafana labels that must be present with these values. */
  labels?: Record<string, string>;
}

const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() ? value.trim() : null);
const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const short = (value: string) => createHash('sha256').update(value).digest('hex').slice(0, 16);
const MAX_FIELD = 2000;
const clip = (value: string | null) => (value && value.length > MAX_FIELD ? `${value.slice(0, MAX_FIELD)}…` : value);

function stringLabels(value: unknown): Record<string, string> {
  return Object.fromEntries(
    Object.entries(record(value)).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

/** Sentry tags arrive as `[[key, value], …]` or `[{key, value}, …]`. */
function sentryTags(tags: unknown): Record<string, string> {
  if (!Array.isArray(tags)) return {};
  const pairs = tags.map((tag) => (Array.isArray(tag) ? tag : [record(tag).key, record(tag).value]));
  return Object.fromEntries(pairs.filter((pair) => typeof pair[0] === 'string' && typeof pair[1] === 'string'));
}

/**
 * A Sentry webhook in any of its three shapes: the integration platform's `issue` resource
 * (`data.issue`), its alert-rule action (`data.event`, resource `event_alert`), and the legacy
 * webhook plugin (top-level `id`, `project`, `culprit`, `event`).
 */
function parseSentry(body: Record<string, unknown>): Alert | null {
  const data = record(body.data);
  const issue = record(data.issue);
  const event = Object.keys(record(data.event)).length ? record(data.event) : record(body.event);
  const issueId = text(issue.id) ?? text(String(event.issue_id ?? '')) ?? text(body.id);
  const eventFingerprint = Array.isArray(event.fingerprint)
    ? event.fingerprint.filter((part) => part !== '{{ default }}')
    : [];
  const title =
    text(issue.title) ?? text(event.title) ?? text(body.message) ?? text(record(event.metadata).title) ?? null;
  if (!title && !issueId) return null;
  const culprit = text(issue.culprit) ?? text(event.culprit) ?? text(body.culprit);
  const sourceProject =
    text(record(issue.project).slug) ?? text(body.project_slug) ?? text(body.project) ?? text(event.project_slug);
  const key = issueId ? `issue:${issueId}` : `${eventFingerprint.join('|') || title}:${culprit ?? ''}`;
  return {
    source: 'sentry',
    fingerprint: `sentry-${issueId ?? short(key)}`,
    title: clip(title ?? `Sentry issue ${issueId}`)!,
    culprit: clip(culprit),
    sourceProject,
    level: text(issue.level) ?? text(event.level) ?? text(body.level),
    url: text(issue.permalink) ?? text(issue.web_url) ?? text(event.web_url) ?? text(body.url),
    labels: sentryTags(event.tags),
    details: clip(text(record(issue.metadata).value) ?? text(record(event.metadata).value) ?? text(event.message)),
  };
}

/**
 * A Grafana (unified alerting / Alertmanager) webhook: the first firing alert of the group names
 * the problem; its fingerprint is Grafana's own (stable per rule and label set).
 */
function parseGrafana(body: Record<string, unknown>): Alert | null {
  const alerts = Array.isArray(body.alerts) ? body.alerts.map(record) : [];
  const alert = alerts.find((entry) => entry.status === 'firing') ?? alerts[0];
  if (!alert && !text(body.title)) return null;
  const labels = { ...stringLabels(body.commonLabels), ...stringLabels(alert?.labels) };
  const annotations = { ...stringLabels(body.commonAnnotations), ...stringLabels(alert?.annotations) };
  const title = text(labels.alertname) ?? text(body.title) ?? 'Grafana alert';
  const fingerprint = text(alert?.fingerprint) ?? short(text(body.groupKey) ?? JSON.stringify(labels));
  return {
    source: 'grafana',
    fingerprint: `grafana-${fingerprint.replace(/[^A-Za-z0-9_.-]/g, '').slice(0, 64) || short(fingerprint)}`,
    title: clip(title)!,
    culprit: null,
    sourceProject: text(labels.project) ?? text(labels.service) ?? text(labels.job),
    level: text(labels.severity),
    url: text(alert?.generatorURL) ?? text(alert?.panelURL) ?? text(body.externalURL),
    labels,
    details: clip(text(annotations.description) ?? text(annotations.summary) ?? text(body.message)),
  };
}

/** The alert a webhook body describes, or null when the body is not one of the source's shapes. */
export function parseAlert(source: AlertSource, body: Record<string, unknown>): Alert | null {
  return source === 'sentry' ? parseSentry(body) : parseGrafana(body);
}

const same = (a: string | null | undefined, b: string) => (a ?? '').toLowerCase() === b.toLowerCase();

/** Whether one mapping rule takes this alert (a rule without conditions takes nothing). */
export function ruleMatches(rule: HealerMappingRule, alert: Alert): boolean {
  const conditions = [
    rule.source === undefined || rule.source === alert.source,
    rule.sourceProject === undefined || same(alert.sourceProject, rule.sourceProject),
    rule.culprit === undefined || (alert.culprit ?? '').toLowerCase().startsWith(rule.culprit.toLowerCase()),
    rule.title === undefined || alert.title.toLowerCase().includes(rule.title.toLowerCase()),
    rule.labels === undefined || Object.entries(rule.labels).every(([key, value]) => same(alert.labels[key], value)),
  ];
  const hasCondition = [rule.sourceProject, rule.culprit, rule.title, rule.labels].some((value) => value !== undefined);
  return hasCondition && conditions.every(Boolean);
}

/** A project's say on an alert: its rules, or (with none) its repository name as the source project. */
export function projectTakesAlert(rules: HealerMappingRule[], repoName: string, alert: Alert): boolean {
  if (rules.length === 0) return same(alert.sourceProject, repoName);
  return rules.some((rule) => ruleMatches(rule, alert));
}

/** The healer run's prompt: the alert as context, and what is asked. Bounded (each field is clipped). */
export function healerPrompt(alert: Alert): string {
  const lines = [
    `A production alert from ${alert.source === 'sentry' ? 'Sentry' : 'Grafana'} needs a fix.`,
    '',
    `Alert: ${alert.title}`,
    ...(alert.culprit ? [`Culprit: ${alert.culprit}`] : []),
    ...(alert.level ? [`Level: ${alert.level}`] : []),
    ...(alert.sourceProject ? [`Source project: ${alert.sourceProject}`] : []),
    ...(alert.url ? [`Link: ${alert.url}`] : []),
    ...(alert.details ? ['', 'Details:', alert.details] : []),
    ...(Object.keys(alert.labels).length
      ? [
          '',
          'Labels:',
          ...Object.entries(alert.labels)
            .slice(0, 20)
            .map(([key, value]) => `- ${key.slice(0, 100)}: ${value.slice(0, 200)}`),
        ]
      : []),
    '',
    'Find the root cause in this repository and fix it with the smallest safe change, with a test that',
    'reproduces the failure. If the cause is outside this repository, explain it in a note instead.',
  ];
  return lines.join('\n');
}

/** The healer workflow's id for an alert fingerprint in a project: one durable memory per pair. */
export function healerWorkflowId(projectId: string, fingerprint: string): string {
  return `healer-${projectId}-${fingerprint}`;
}
