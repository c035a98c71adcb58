#pragma once
// Text <-> attribute value, for the layer editor's attribute table.
#include "batchfit/attributes.h"
#include "batchfit/result.h"

#include <QCoreApplication>
#include <QString>

namespace batchfit {

/// Parses what a user typed into an attribute value, explaining what is wrong when it cannot.
class AttributeValue {
    Q_DECLARE_TR_FUNCTIONS(batchfit::AttributeValue)

public:
    /// "true"/"false" -> bool, "64" -> int, "1e-5" -> double, "[3,3]" -> int list, anything else -> string.
    /// When `like` is a double, a whole number stays a double; when it is a list, "3" becomes [3].
    static Result<AttrValue> parse(const QString& text, const AttrValue* like = nullptr);
    /// The text a user would type to get the value back.
    static QString toText(const AttrValue& value);
    /// "integer", "number", "true/false", "list of integers", "text".
    static QString typeName(const AttrValue& value);
};

} // namespace batchfit
