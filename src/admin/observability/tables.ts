/**
 * Tables of feedback and log exports (migrations 0012 and 0026),
 * declared here by module augmentation so that the shared schema file stays untouched.
 */
declare module '../../storage/schema.js' {
  interface Database {
    feedback: FeedbackTable;
    log_exports: LogExportsTable;
    log_export_chunks: LogExportChunksTable;
  }
}

/** Feedback on a trace, given by a workspace key; it belongs to that key's workspace. */
export interface FeedbackTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  trace_id: string;
  /** −10 to 10. */
  value: number;
  /** 0 to 1. */
  weight: number;
  /** JSON object, or null. */
  metadata: string | null;
  api_key_id: string;
  created_at: string;
  last_updated_at: string;
}

export type ExportStatus = 'draft' | 'in_progress' | 'success' | 'failed' | 'stopped';

export interface LogExportsTable {
  id: string;
  organisation_id: string;
  /** Null: every workspace of the organisation (admin keys only). */
  workspace_id: string | null;
  /** JSON of the validated filters. */
  filters: string;
  /** JSON array of the requested fields, in order. */
  requested_data: string;
  status: ExportStatus;
  description: string | null;
  /** The user of the key that created it, or the key itself when it has no user. */
  created_by: string;
  api_key_id: string;
  /** Logs that matched when the export was created or last updated. */
  total: number;
  rows_written: number;
  /** JSONL file under <data_dir>/exports, once a run has begun. */
  file_name: string | null;
  error: string | null;
  /** Set when the creator sees only its own keys' logs (data visibility off): so does the export. */
  owner_user_id: string | null;
  /** The last request_logs.seq written by the current run: runs go forward by seq. */
  cursor_seq: number;
  /** The newest request_logs.seq when the run began: later requests are not exported, so a run ends. */
  until_seq: number;
  created_at: string;
  last_updated_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** One batch of an export's JSONL file, when exports are kept in the database (PostgreSQL). */
export interface LogExportChunksTable {
  export_id: string;
  seq: number;
  data: string;
}
