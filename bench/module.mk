# bench/: rules added with its first sources.
