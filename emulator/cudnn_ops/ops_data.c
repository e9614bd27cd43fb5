/* The data object libcudnn_ops.so.9 exports, with the real value. */
int cudnn_ops_infer_version = 594688;
