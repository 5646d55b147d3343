CREATE TABLE exports (
  id integer PRIMARY KEY,
  status text NOT NULL DEFAULT 'QUEUED',
  worker text,
  heartbeat_at timestamptz
);
CREATE TABLE export_parts (
  id serial PRIMARY KEY,
  export_id integer NOT NULL,
  part integer NOT NULL,
  worker text NOT NULL
);
