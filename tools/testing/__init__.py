"""What the tests and benchmarks use: the hub as a child process, a throw-away Mosquitto,
the network impairment proxy, the host standing still."""
