/* The opaque handles of include/portal_auth.h, completed for Swift alone. Swift names a
 * pointer to a complete type (UnsafeMutablePointer<portal_auth>), where it would see an
 * incomplete one as an OpaquePointer; C callers keep seeing them opaque, and nothing ever
 * looks inside. */
#ifndef PORTAL_AUTH_HANDLES_H
#define PORTAL_AUTH_HANDLES_H

#include "../../include/portal_auth.h"

struct portal_auth { char opaque_; };
struct portal_auth_error { char opaque_; };
struct portal_auth_call { char opaque_; };
struct portal_auth_methods { char opaque_; };
struct portal_auth_result { char opaque_; };
struct portal_auth_session { char opaque_; };
struct portal_auth_completion_queue { char opaque_; };

#endif
