"""What the event prints: the results (CSV, JSON, the HTML sheet) and the table cards."""
