# man/: rules added with its first sources.
