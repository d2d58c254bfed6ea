"""The hub's core: the service that turns board messages and operator actions into stored
events, acknowledgements and commands; what its parts share; alerts, the registry, the clock it runs on."""
