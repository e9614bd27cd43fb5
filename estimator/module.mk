# estimator/: rules added with its first sources.
