"""The event folder: format, entrants, stations and rounds in files an organizer edits,
the lock that keeps one hub per log, secret files, the demo event."""
