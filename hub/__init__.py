"""TableTimer hub: the organizer laptop's service (installed as tabletimer.hub; its parts are the subpackages, docs/architecture.md)."""
