"""Reading the archive for people: a URL's captures (captures), a job's pages (pages), one URI's visits in a
continuous job (urihistory), and the replay service's collections kept in step with the chain (replay)."""
