# spank_plugin/: rules added with its first sources.
