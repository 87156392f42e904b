"""Small widgets the panels share: a toolbar whose overflow goes behind », a label that elides."""
