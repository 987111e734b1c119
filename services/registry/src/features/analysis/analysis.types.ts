// What publish-time analysis extracts from a module (spec part B "Module detail" and
// "Versions response"; reference B.4 for the public registry's shapes).

export interface ModuleInput {
  name: string;
  /** HCL type expression as written (`string`, `map(string)`), "" when not declared. */
  type: string;
  description: string;
  /** JSON encoding of the default (`"\"us-east-1\""`), "" when there is none (reference B.4). */
  default: string;
  /** True when the variable has no default (Terraform's rule; `default = null` is optional). */
  required: boolean;
}

export interface ModuleOutput {
  name: string;
  description: string;
}

export interface ModuleDependency {
  name: string;
  source: string;
  version: string;
}

export interface ModuleResource {
  name: string;
  type: string;
}

export interface ProviderRequirement {
  /** Local name (`aws`). */
  name: string;
  /** Source address as declared (`hashicorp/aws`), "" when implied. */
  source: string;
  /** Version constraint, "" when none is declared. */
  version: string;
}

export interface ModulePart {
  /** "" for the root module, `modules/<x>` for submodules. */
  path: string;
  readme: string;
  /** True when the part has no `.tf` files. */
  empty: boolean;
  inputs: ModuleInput[];
  outputs: ModuleOutput[];
  dependencies: ModuleDependency[];
  resources: ModuleResource[];
  providers: ProviderRequirement[];
}

export interface ModuleAnalysis {
  root: ModulePart;
  submodules: ModulePart[];
}
