"""The organizer consoles: the Textual app, its view model, forms and table, the HTTP API
for consoles on other laptops and their client."""
