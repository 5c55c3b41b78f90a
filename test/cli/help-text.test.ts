// Option values in svc's help are named: by the option, by a table of better words, or by the
// command's own where an option means something else there (db migrate-to-postgres's --from).
import test from 'ava';
import { namePlaceholders } from '../../cli/help-text.ts';

test("an option's value is named by what it is, in the command it belongs to", (t) => {
  t.is(namePlaceholders('  -p,--prompt #0    what to do'), '  -p,--prompt <text>    what to do');
  t.is(
    namePlaceholders('svc analytics runs [--from #0] [--to #0]'),
    'svc analytics runs [--from <date>] [--to <date>]',
  );
  t.is(
    namePlaceholders('svc db migrate-to-postgres <--from #0> <--to #0>'),
    'svc db migrate-to-postgres <--from <sqlite-file>> <--to <postgres-url>>',
  );
  t.is(
    namePlaceholders('  --from #0    the SQLite read model', 'db migrate-to-postgres'),
    '  --from <sqlite-file>    the SQLite read model',
  );
});
