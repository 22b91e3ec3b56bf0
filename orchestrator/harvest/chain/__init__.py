"""The indexer chain after each job (shared/seeds/001…, 4.1): its steps ingest → index → transfer → backup →
delete (steps), the daily and big merges (merging), storage locations from the settings (storage), re-hashing
stored copies (verify), claims' leases and file locks (leases, locks), and its Celery tasks (tasks)."""
