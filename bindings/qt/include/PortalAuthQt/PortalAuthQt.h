// portal-auth-qt: Portal's Client Auth sign-in for Qt 6 applications.
#pragma once

#include <PortalAuthQt/Client.h>
#include <PortalAuthQt/Options.h>
#include <PortalAuthQt/Reply.h>
#include <PortalAuthQt/TotpStep.h>
