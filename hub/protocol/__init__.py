"""The board protocol as the hub knows it: its topics and checks, the boards' keys, the hub's
secret and term proofs, replay protection, the station states a board reports."""
