#include "catch_compat.h"
