// Integration tests talk to real PostgreSQL and Redis (and spawn real processes); creating
// or dropping a database can take seconds on a busy machine, so they get 60 s per test.
jest.setTimeout(60_000);
