/* The data object libcudnn_adv.so.9 exports, with the real value. */
int cudnn_adv_infer_version = 594688;
