"""The competition as a deterministic fold of the log: facts, stations, conflicts,
decisions, station states and schedules, and the checks a row passes before it is folded."""
