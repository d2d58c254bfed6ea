"""TableTimer hub: the organizer laptop's service (installed as tabletimer.hub)."""
