CREATE TABLE reports (
  id integer PRIMARY KEY,
  status text NOT NULL DEFAULT 'QUEUED',
  worker text,
  heartbeat_at timestamptz,
  url text
);
