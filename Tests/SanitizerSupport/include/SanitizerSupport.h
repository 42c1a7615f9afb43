/* Nothing to call: linking this target is what matters (see futex_annotations.c). */
#ifndef SANITIZER_SUPPORT_H
#define SANITIZER_SUPPORT_H
#endif
