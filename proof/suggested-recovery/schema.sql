CREATE TABLE render_jobs (
  id         integer PRIMARY KEY,
  status     text NOT NULL DEFAULT 'PENDING',  -- PENDING, RENDERING, COMPLETED, FAILED
  pages_done integer NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now()
);
