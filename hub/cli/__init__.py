"""The `tabletimer` command (`main.main`): one module a command group, the serving loop in
its own."""
