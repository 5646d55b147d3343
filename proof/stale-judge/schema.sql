CREATE TABLE renders (
  id integer PRIMARY KEY,
  status text NOT NULL DEFAULT 'QUEUED',
  worker text,
  url text,
  started_at timestamptz,
  heartbeat_at timestamptz
);
