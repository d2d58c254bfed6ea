"""Running a broker for the hall: the embedded one and Mosquitto as child processes, their
logins and ACL, the connection gate, TLS certificates, ports and open-file limits."""
