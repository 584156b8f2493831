/**
 * Query parameters sent as JSON text (`narrow=[…]`, `message_ids=[1,2]`), decoded and checked
 * against their spec schema with no type coercion, as Zulip's `Json[...]` parameters are: the
 * request validator coerces every query parameter, which inside a decoded value would let
 * `true` pass as the string "true". A failure is reported as the validator's own errors are,
 * so the error handler words it the same way (`operand is not a string`).
 */
import { Ajv2020, type AnySchema, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import type { LoadedSpec } from "./spec.ts";

/** Shaped like express-openapi-validator's errors, which http/error-handler.ts rewords. */
export class ParameterValidationError extends Error {
  readonly status = 400;
  constructor(
    readonly errors: {
      path: string;
      message: string;
      errorCode: string;
      params: Record<string, unknown>;
    }[],
  ) {
    super(errors[0]?.message ?? "invalid parameter");
  }
}

const compilers = new WeakMap<
  LoadedSpec,
  { ajv: Ajv2020; validators: Map<string, ValidateFunction> }
>();

function validatorFor(spec: LoadedSpec, pointer: string): ValidateFunction {
  let compiler = compilers.get(spec);
  if (!compiler) {
    const ajv = new Ajv2020({
      strict: false,
      allErrors: false,
      coerceTypes: false,
      validateFormats: false,
    });
    ajv.addSchema(spec.doc as AnySchema, "spec");
    compilers.set(spec, (compiler = { ajv, validators: new Map() }));
  }
  let validate = compiler.validators.get(pointer);
  if (!validate)
    compiler.validators.set(pointer, (validate = compiler.ajv.compile({ $ref: `spec${pointer}` })));
  return validate;
}

function toValidatorErrors(name: string, errors: ErrorObject[]): ParameterValidationError {
  return new ParameterValidationError(
    errors.map((e) => {
      const missing = e.keyword === "required" ? `/${String(e.params.missingProperty)}` : "";
      return {
        path: `/query/${name}${e.instancePath}${missing}`,
        message: e.message ?? "is invalid",
        errorCode: `${e.keyword}.openapi.validation`,
        params: e.params,
      };
    }),
  );
}

/** Checks a decoded JSON query parameter against the schema at `pointer`; throws ParameterValidationError. */
export function checkJsonQueryParam(
  spec: LoadedSpec,
  name: string,
  pointer: string,
  value: unknown,
) {
  const validate = validatorFor(spec, pointer);
  if (!validate(value)) throw toValidatorErrors(name, validate.errors ?? []);
}
