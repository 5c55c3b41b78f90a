// The two databases the read model runs on: named apart from db/orm.ts, which loads the migrations
// that are written per dialect.
export type DbDialect = 'sqlite' | 'postgresql';
