# The stand-ins of tests/libs and what each is checked against, sourced by
# its tests: "file status-type header..." per line. The status type is what
# the library's functions return for success and failure; the headers
# declare the library's API (read for return types).
STANDINS=$(cat <<'LIST'
libcublas.so.13 cublasStatus_t cublas.h cublasXt.h
libcublasLt.so.13 cublasStatus_t cublasLt.h
LIST
)
