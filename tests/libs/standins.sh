# The stand-ins of tests/libs and what each is checked against, sourced by
# its tests: "file status-type header..." per line. The status type is what
# the library's functions return for success and failure; the headers
# declare the library's API (read for return types).
STANDINS=$(cat <<'LIST'
libcublas.so.13 cublasStatus_t cublas.h cublasXt.h
libcublasLt.so.13 cublasStatus_t cublasLt.h
libcudnn.so.9 cudnnStatus_t cudnn.h
libcudnn_graph.so.9 cudnnStatus_t cudnn_graph.h
libcudnn_ops.so.9 cudnnStatus_t cudnn_ops.h
libcudnn_cnn.so.9 cudnnStatus_t cudnn_cnn.h
libcudnn_adv.so.9 cudnnStatus_t cudnn_adv.h
libcudnn_engines_precompiled.so.9 cudnnStatus_t
libcudnn_engines_runtime_compiled.so.9 cudnnStatus_t
libcudnn_heuristic.so.9 cudnnStatus_t
LIST
)
