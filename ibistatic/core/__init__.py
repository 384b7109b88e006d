"""The pure core: identifiers, persistent URLs, verb lists, relations, pair lists,
property lists and resolution.  Nothing in this package does I/O."""
