CREATE TABLE exports (
  id               integer PRIMARY KEY,
  status           text NOT NULL DEFAULT 'QUEUED',  -- QUEUED, RENDERING, DONE
  lease_owner      text,
  lease_token      bigint NOT NULL DEFAULT 0,       -- grows by one with every grant of the lease
  lease_expires_at timestamptz,
  video_url        text,
  rendered_by      text
);
