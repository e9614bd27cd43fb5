# sim/: rules added with its first sources.
