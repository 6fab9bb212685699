"""Op mappers: source ops -> IR ops. One subpackage per source framework,
one module per op family; each mapper registers itself by decorator."""
