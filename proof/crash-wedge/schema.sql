CREATE TABLE audio_jobs (
  id            integer PRIMARY KEY,
  status        text NOT NULL DEFAULT 'PENDING',  -- PENDING, GENERATING, COMPLETED, FAILED
  error_message text,
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE audio_items (
  id         serial PRIMARY KEY,
  job_id     integer NOT NULL REFERENCES audio_jobs (id),
  text       text NOT NULL,
  status     text NOT NULL DEFAULT 'PENDING',     -- PENDING, GENERATING, DONE, ERROR
  audio_url  text,
  updated_at timestamptz NOT NULL DEFAULT now()
);
