#pragma once
// vellum: embed the inference engine without the server. See examples/generate.cpp.

#include "vellum/event.h"
#include "vellum/model.h"
#include "vellum/options.h"
#include "vellum/stream.h"
