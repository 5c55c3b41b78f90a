import test from 'ava';
import { isReady, parseIssues, parsePlans, readyPlans } from '../../core/seeds.ts';

const issues = [
  '{"id":"s-1","title":"One","status":"open","description":"first"}',
  'not json at all',
  '{"id":"s-2","title":"Two","status":"open","blockedBy":["s-1"]}',
  '["an","array"]',
  '{"title":"no id"}',
  '{"id":"s-1","title":"One, edited","status":"closed"}',
  '{"id":"s-3","title":"Three","status":"in_progress","blockedBy":["s-9"]}',
  '{"id":"s-4","status":"wontfix"}',
  '',
].join('\n');

test('the last line for an id wins; malformed lines are skipped and counted', (t) => {
  const { records, skippedLines } = parseIssues(issues);
  t.is(skippedLines, 3);
  t.deepEqual([...records.keys()], ['s-2', 's-1', 's-3', 's-4']);
  t.like(records.get('s-1'), { title: 'One, edited', status: 'closed' });
  t.like(records.get('s-3'), { status: 'open', rawStatus: 'in_progress' });
  t.like(records.get('s-4'), { status: 'other', title: '' });
});

test('a seed is ready when open and every blocker is closed (unknown blockers block)', (t) => {
  const { records } = parseIssues(issues);
  t.true(isReady(records.get('s-2')!, records));
  t.false(isReady(records.get('s-1')!, records));
  t.false(isReady(records.get('s-3')!, records));
});

test('ready plans: approved, with an open child, never dispatched', (t) => {
  const { records: seeds } = parseIssues(issues);
  const { records: plans } = parsePlans(
    [
      '{"id":"pl-a","status":"approved","name":"A","children":["s-1","s-2"]}',
      '{"id":"pl-b","status":"approved","children":["s-1"]}',
      '{"id":"pl-c","status":"draft","children":["s-2"]}',
      '{"id":"pl_d","status":"approved","children":["unknown-seed"]}',
      '{"id":"pl-e","status":"approved","children":["s-2"]}',
    ].join('\n'),
  );
  t.deepEqual(readyPlans(plans, seeds, new Set(['pl-e'])), [
    { id: 'pl-a', name: 'A', status: 'approved', openChildCount: 1 },
    { id: 'pl_d', status: 'approved', openChildCount: 1 },
  ]);
});
