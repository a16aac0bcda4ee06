// The one source of the targets that compile the precompiled headers.
