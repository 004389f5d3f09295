/* The untuned fallback of ait_artifact_load (private to src/api). */
#ifndef AIT_API_ARTIFACT_LOAD_H
#define AIT_API_ARTIFACT_LOAD_H
#include "ait.h"

/* Loads the model embedded in the artifact at path untuned, for a tuned load
 * that was refused for reason why: the file is opened again, and with a
 * trusted key (not NULL) the header this second open reads must carry a
 * signature by it, since the file may have been replaced since the first
 * open checked its own. When nothing can be loaded, why is the error (or,
 * for a lean artifact, both reasons). Its own function so that a test can
 * stand for a file replaced between the two opens (unit_plan). */
ait_status artifact_load_untuned(const char *path, const char *trusted_key, const ait_error *why,
                                 ait_model **out, ait_error *e);
#endif
