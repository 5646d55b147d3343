CREATE TABLE cron_locks (
  job_name text PRIMARY KEY,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE TABLE cron_chunks (
  id serial PRIMARY KEY,
  chunk integer NOT NULL,
  holder text NOT NULL
);
