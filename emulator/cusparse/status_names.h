/* Names and descriptions of cusparseStatus_t, which cuSPARSE and cuSPARSELt
 * share (cusparseGetErrorName/String, cusparseLtGetErrorName/String). */
#ifndef MAYA_CUSPARSE_STATUS_NAMES_H
#define MAYA_CUSPARSE_STATUS_NAMES_H

static const struct {
    const char *name, *text;
} cusparse_status_names[] = {
    { "CUSPARSE_STATUS_SUCCESS", "success" },
    { "CUSPARSE_STATUS_NOT_INITIALIZED", "initialization error" },
    { "CUSPARSE_STATUS_ALLOC_FAILED", "out of memory" },
    { "CUSPARSE_STATUS_INVALID_VALUE", "invalid value" },
    { "CUSPARSE_STATUS_ARCH_MISMATCH", "architecture mismatch" },
    { "CUSPARSE_STATUS_MAPPING_ERROR", "mapping error" },
    { "CUSPARSE_STATUS_EXECUTION_FAILED", "execution failed" },
    { "CUSPARSE_STATUS_INTERNAL_ERROR", "internal error" },
    { "CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED", "matrix type not supported" },
    { "CUSPARSE_STATUS_ZERO_PIVOT", "zero pivot" },
    { "CUSPARSE_STATUS_NOT_SUPPORTED", "operation not supported" },
    { "CUSPARSE_STATUS_INSUFFICIENT_RESOURCES", "insufficient resources" },
};

static inline const char *cusparse_status_name(int status, int text)
{
    if (status < 0 || (size_t)status >= sizeof cusparse_status_names / sizeof cusparse_status_names[0])
        return text ? "unknown error" : "CUSPARSE_STATUS_UNKNOWN";
    return text ? cusparse_status_names[status].text : cusparse_status_names[status].name;
}

#endif
